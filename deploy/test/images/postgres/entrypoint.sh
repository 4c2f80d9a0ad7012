#!/bin/bash
set -euo pipefail
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ "${1:-}" = "postgres" ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 0700 "$PGDATA"
    if [ ! -s "$PGDATA/PG_VERSION" ]; then
        user=${POSTGRES_USER:-postgres}
        : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
        pwfile=$(mktemp) && printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile" && chown postgres "$pwfile"
        as_postgres initdb --username="$user" --pwfile="$pwfile" --auth-local=trust \
            --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
        rm -f "$pwfile"
        echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
        echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
        db=${POSTGRES_DB:-$user}
        as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
        if [ "$db" != "postgres" ]; then
            as_postgres psql -v ON_ERROR_STOP=1 --username="$user" --dbname=postgres \
                -c "CREATE DATABASE \"$db\"" >/dev/null
        fi
        as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
        echo "initialised $PGDATA (user $user, database $db)"
    fi
    shift
    exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" "$@"
fi
exec "$@"
