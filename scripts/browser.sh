#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests (tests/browser, marker `browser`) when it
# is missing. Idempotent: a machine that already has /usr/bin/chromium does nothing.
# Playwright drives this binary (executable_path="/usr/bin/chromium"); it never downloads
# a browser build of its own, since deployments and CI reach only the package registries.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
/usr/bin/chromium --version
