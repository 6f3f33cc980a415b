// SPDX-License-Identifier: MIT
// ort-optimize.js SRC DST [LEVEL] - network SRC as onnxruntime's own
// optimizer saves it (session option optimizedModelFilePath, at LEVEL,
// "extended" by default: its fused contrib ops, FusedConv, FusedMatMul,
// SkipLayerNormalization, Gelu ...; "all" would add host-specific
// layouts), into DST/model.onnx with SRC's inputs.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

(async () => {
  const [src, dst, level = 'extended'] = process.argv.slice(2);
  if (!src || !dst) throw new Error('usage: ort-optimize.js SRC DST [LEVEL]');
  fs.mkdirSync(path.join(dst, 'test_data_set_0'), { recursive: true });
  await ort.InferenceSession.create(path.join(src, 'model.onnx'), {
    graphOptimizationLevel: level, executionProviders: ['cpu'],
    optimizedModelFilePath: path.join(dst, 'model.onnx'),
  });
  for (const f of fs.readdirSync(path.join(src, 'test_data_set_0')))
    if (f.startsWith('input_'))
      fs.copyFileSync(path.join(src, 'test_data_set_0', f), path.join(dst, 'test_data_set_0', f));
})().catch((e) => { console.error(`ort-optimize.js: ${e.message}`); process.exit(1); });
