#!/usr/bin/env bash
# Installs what the build and tests need and a fresh Debian machine may lack.
set -euo pipefail
need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v git >/dev/null 2>&1 || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
go mod download
