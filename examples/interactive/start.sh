#!/bin/sh
# The command of a sokovan interactive session (named in the image's
# /etc/sokovan/image.json): sshd on 2200 for `sokovan ssh`, then Jupyter on
# 8888 under the app proxy's prefix /s/SESSION/jupyter/ (Jupyter writes
# absolute links and redirects, so it must know the prefix it is served
# under). Both run as the session's user. The proxy authenticates every
# request with the session owner's token, so Jupyter's own token is off;
# its XSRF check stays on.
set -eu
: "${SOKOVAN_SESSION_ID:?sokovan-interactive runs as a sokovan session}"
export HOME=/home/work SHELL=/bin/bash
cd "$HOME"
/usr/sbin/sshd -D -e -f /etc/ssh/sokovan_sshd_config &
exec jupyter notebook --no-browser --ip=0.0.0.0 --port=8888 \
    --notebook-dir="$HOME" \
    --NotebookApp.base_url="/s/$SOKOVAN_SESSION_ID/jupyter/" \
    --NotebookApp.token='' --NotebookApp.password='' \
    --NotebookApp.allow_origin='*' --NotebookApp.allow_remote_access=True
