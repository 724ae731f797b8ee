#!/bin/sh
# Build the interactive image: a Debian 12 root file system with python3,
# Jupyter Notebook and an SSH server, from the Debian package registry
# (mmdebstrap), as a tarball `sokovan-agent --import-image NAME=TARBALL`
# (or skv_image_import) takes.
#
#   examples/interactive/build-image.sh OUT.tar [MIRROR]
#
# MIRROR defaults to http://deb.debian.org/debian. Kept small for a quick
# build: --variant=apt (no "important"/"standard" packages), no recommends,
# no documentation, man pages or translations. The image carries its
# sokovan metadata in /etc/sokovan/image.json (services and command, read
# by the agent's image store), the command sokovan-interactive and an sshd
# config; /etc/passwd gets the session user "work" (uid 65534, the user
# sokovan containers run as) with home /home/work and a login shell.
set -eu
out=${1:?usage: build-image.sh OUT.tar [MIRROR]}
mirror=${2:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")" && pwd)
command -v mmdebstrap >/dev/null ||
    { echo "build-image.sh: mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; exit 1; }
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
mmdebstrap --variant=apt --mode=root --format=tar \
    --include=python3,jupyter-notebook,python3-ipykernel,openssh-server \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook="mkdir -p \"\$1/etc/sokovan\"" \
    --customize-hook="copy-in '$here/image.json' /etc/sokovan" \
    --customize-hook="upload '$here/start.sh' /usr/local/bin/sokovan-interactive" \
    --customize-hook="upload '$here/sshd_config' /etc/ssh/sokovan_sshd_config" \
    --customize-hook='chmod 0755 "$1/usr/local/bin/sokovan-interactive"' \
    --customize-hook='sed -i "/^nobody:/i work:x:65534:65534:sokovan session user:/home/work:/bin/bash" "$1/etc/passwd"' \
    --customize-hook='mkdir -p "$1/home/work" && chown 65534:65534 "$1/home/work"' \
    --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*' \
    bookworm "$tmp" "$mirror" </dev/null
mv "$tmp" "$out"
trap - EXIT
