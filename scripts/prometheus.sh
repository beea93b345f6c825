#!/usr/bin/env bash
# Install Debian's Prometheus server for the metrics test (tests/observability) when it is
# missing. Idempotent: a machine that already has /usr/bin/prometheus does nothing. Only
# the binary is used (the test runs its own instance on a free port with its own config);
# the package's service is not needed.
set -euo pipefail

if [ -x /usr/bin/prometheus ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
/usr/bin/prometheus --version
