#!/bin/bash
# SPDX-License-Identifier: MIT
# test_setup_deps.sh - scripts/setup-deps --check, which decides before
# anything changes whether this host can be set up: Debian 12 or the
# NPU_ANY_DISTRO override, and root or passwordless sudo. Fake os-release
# files stand for other systems; an unprivileged user (setpriv, where this
# runs as root) for a missing root. TAP on stdout.
cd "$(dirname "$0")/../.."
n=0
fails=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# check DESCRIPTION STATUS MESSAGE [VAR=VALUE...] -- CMD...
check() {
	local desc=$1 want=$2 msg=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	n=$((n + 1))
	if [ "$rc" = "$want" ] && printf '%s\n' "$out" | grep -qF -- "$msg"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc: status $rc (want $want), output:"
		printf '%s\n' "$out" | sed 's/^/# /'
		fails=$((fails + 1))
	fi
}

printf 'ID=debian\nVERSION_ID="12"\n' >"$dir/debian12"
printf 'ID=ubuntu\nVERSION_ID="24.04"\n' >"$dir/ubuntu"
printf 'ID=debian\nVERSION_ID="13"\n' >"$dir/debian13"
run() { NPU_OS_RELEASE=$1 scripts/setup-deps --check; }
any() { NPU_ANY_DISTRO=1 NPU_OS_RELEASE=$1 scripts/setup-deps --check; }

check "Debian 12 can be set up" 0 "this host can be set up" run "$dir/debian12"
check "Ubuntu is refused, named" 1 \
	"this host is ubuntu 24.04, not Debian 12 (bookworm)" run "$dir/ubuntu"
check "the refusal names the override" 1 "set NPU_ANY_DISTRO=1 to go on anyway" \
	run "$dir/ubuntu"
check "Debian 13 is refused" 1 "this host is debian 13, not Debian 12" run "$dir/debian13"
check "no os-release is refused, saying so" 1 "(no $dir/none)" run "$dir/none"
check "NPU_ANY_DISTRO=1 goes on, saying so" 0 "NPU_ANY_DISTRO=1: going on on ubuntu 24.04" \
	any "$dir/ubuntu"
check "an unknown option is refused" 1 "unknown option '--bogus'" scripts/setup-deps --bogus
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# nobody has no sudo rights: without sudo, or with one that asks
	cp scripts/setup-deps "$dir/setup-deps" && chmod 755 "$dir" "$dir/setup-deps" \
		"$dir/debian12"
	check "without root or passwordless sudo it says so" 1 "installing needs root" \
		setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$dir" \
		NPU_OS_RELEASE="$dir/debian12" "$dir/setup-deps" --check
else
	n=$((n + 1))
	echo "ok $n - without root or passwordless sudo it says so # SKIP not root here"
fi
echo "1..$n"
[ "$fails" = 0 ]
