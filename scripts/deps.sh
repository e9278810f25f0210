#!/usr/bin/env bash
# Installs what the build and tests need and a fresh Debian machine may lack.
# It never calls sudo: as root it runs apt-get, as anyone else it says what
# to install and stops ('make build' must not ask for a password).
set -euo pipefail
need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v git >/dev/null 2>&1 || need+=(git)
# The install test checks the unit files with systemd-analyze verify.
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing ${need[*]}; install them first, e.g.: sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
  echo "deps: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
go mod download
