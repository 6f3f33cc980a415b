# SPDX-License-Identifier: MIT
# Sphinx configuration of the NPU stack's documentation: `make docs` builds
# it as HTML into build/docs/html with every warning an error (Debian's
# python3-sphinx; nothing from outside Debian).
project = 'The NPU stack'
copyright = 'the NPU stack authors'
master_doc = 'index'
exclude_patterns = ['_build']
# Plain reStructuredText: no extensions, no downloads, the stock theme.
extensions = []
html_theme = 'alabaster'
html_static_path = []
# A literal block is plain text unless it names its language (code-block).
highlight_language = 'none'
