#!/bin/sh
set -e
if [ "$1" = "redis-server" ]; then
    chown -R redis:redis /data
    shift
    exec setpriv --reuid=redis --regid=redis --init-groups redis-server --protected-mode no "$@"
fi
exec "$@"
