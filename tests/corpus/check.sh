#!/bin/sh
# check.sh BUILD_DIR [--only SUBSTRING]: decode the capture corpus with
# BUILD_DIR/nagare and compare record counts with tshark (see check.py).
# Needs python3, tshark and mergecap.  Exit 0 all OK, 1 a crash or an
# unexplained count mismatch, 2 usage error.
set -e
if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [--only SUBSTRING]" >&2
	exit 2
fi
exec python3 "$(dirname "$0")/check.py" "$@"
