#!/usr/bin/env bash
# Install Debian's nginx for the deployment tests (tests/deploy: the compose file's proxy
# service run as a process) when it is missing. Idempotent: a machine that already has
# /usr/sbin/nginx does nothing. Only the binary is used (each test runs its own instance
# on a free port with the shipped deploy/nginx/nginx.conf); the package's service is
# neither needed nor started.
set -euo pipefail

if [ -x /usr/sbin/nginx ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
# policy-rc.d refuses service starts during the install: the package's own nginx would
# otherwise take port 80 on the machine.
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends nginx >/dev/null
/usr/sbin/nginx -v
