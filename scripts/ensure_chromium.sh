#!/usr/bin/env sh
# The browser tests drive Debian's Chromium; install it on a fresh machine (CI runs as root).
set -e
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = "0" ]; then
  echo "Installing Debian's chromium for the browser tests..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "The browser tests need Debian's chromium: run 'sudo apt-get install -y chromium'" >&2
  exit 1
fi
