#!/usr/bin/env bash
# `make test-deploy`: the team setup (docker-compose.yml, docker-compose.scale.yml) brought up
# for real on this machine and checked from outside, then every Kubernetes overlay rendered
# and validated. See deploy/test/README.md.
#
#  1. a Docker engine: the host's; where none answers and this is a Debian-family machine
#     run as root, Debian's docker.io is installed and started, with the Compose v2 and
#     buildx plugins from Debian's next release when the installed Compose is too old;
#  2. images: the infrastructure images and the base images of backend/Dockerfile are
#     pulled, or, where no registry serves them, built here from Debian packages and PyPI
#     (deploy/test/images) on a Debian base made with debootstrap; the backend's image is
#     built from backend/Dockerfile as it is;
#  3. the checks of backend/tests/deploy/deploy_checks.py against the running stack, one
#     backend and then three behind the proxy;
#  4. the red team (backend/tests/redteam, mode "compose") through the stack, one backend
#     again, started with the red team's settings;
#  5. the Kubernetes overlays (kustomize build + strict schema validation).
# Everything made for a run (containers, networks, volumes) is removed at the end; images,
# the base and the plugins are kept, so a second run reuses them. Fails, never skips, when
# no engine can be had.
#
# `run.sh --prepare` does only what needs no stack: the engine, the images, the backend's
# image and kustomize (1, 2 and the tools of 5), then stops. `make test` runs it in the
# background beside the backend's and the browser's tests, and the whole run after them
# finds everything made (a build with every layer cached, no pull, no debootstrap).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/deploy/test
STATE=${WORKBENCH_TEST_STATE:-/var/lib/workbench-test}
PROJECT=${WORKBENCH_TEST_PROJECT:-workbench-test}
COMPOSE_MIN=2.24.0
STARTED=$(date +%s)
UV=${UV:-$(command -v uv 2>/dev/null || echo "python3 -m uv")}
MODE=all
case "${1:-}" in
    "") ;;
    --prepare) MODE=prepare ;;
    *) echo "usage: $0 [--prepare]" >&2; exit 2 ;;
esac

say() { printf '\n== %s\n' "$*"; }
die() { printf '\ntest-deploy FAILED: %s\n' "$*" >&2; exit 1; }
elapsed() { echo $(($(date +%s) - STARTED)); }
is_root_debian() { [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ] && command -v apt-get >/dev/null; }
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

# --- 1. the engine ----------------------------------------------------------------------

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
}

# The Debian mirror the host's apt uses (one-line or deb822 sources; comments skipped).
debian_mirror() {
    local found
    found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | grep -v '^[[:space:]]*#' | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -1 | tr -d ' ' || true)
    echo "${found:-http://deb.debian.org/debian}"
}

# Compose v2 and buildx from Debian's next release (their Go binaries run on Debian 12),
# with an apt configuration of their own: the host's sources stay as they are.
install_trixie_plugins() {
    local mirror apt_dir=$STATE/apt-trixie plugins=/usr/local/lib/docker/cli-plugins
    mirror=$(debian_mirror)
    mkdir -p "$apt_dir"/{lists/partial,cache/archives/partial,debs} "$plugins"
    touch "$apt_dir/status"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} trixie main" > "$apt_dir/sources.list"
    cat > "$apt_dir/apt.conf" <<EOF
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Dir::State::Lists "$apt_dir/lists";
Dir::Cache "$apt_dir/cache";
Dir::State::status "$apt_dir/status";
APT::Sandbox::User "root";
EOF
    APT_CONFIG=$apt_dir/apt.conf apt-get update -qq
    if [ $# -gt 0 ]; then  # other programs: unpacked into $STATE/<package>
        for package in "$@"; do
            (cd "$apt_dir/debs" && rm -f ./*.deb && APT_CONFIG=$apt_dir/apt.conf apt-get download -qq "$package" \
                && rm -rf "${STATE:?}/$package" && dpkg-deb -x ./*.deb "$STATE/$package")
        done
        return 0
    fi
    (cd "$apt_dir/debs" && rm -f ./*.deb && APT_CONFIG=$apt_dir/apt.conf apt-get download -qq docker-compose docker-buildx)
    rm -rf "$apt_dir/x"
    for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$apt_dir/x"; done
    install -m 0755 "$apt_dir"/x/usr/libexec/docker/cli-plugins/docker-{compose,buildx} "$plugins/"
}

compose_version() { { docker compose version --short 2>/dev/null || true; } | sed 's/^v//; s/[-+].*//'; }

ensure_engine() {
    if ! docker info >/dev/null 2>&1; then
        [ -z "${DOCKER_HOST:-}" ] || die "no Docker engine answers at DOCKER_HOST=$DOCKER_HOST"
        is_root_debian || die "no Docker engine answers (docker info), and this is not a Debian-family machine run as root where one could be installed: start Docker and run again"
        if pidof dockerd >/dev/null; then
            say "dockerd is starting: waiting for it"
        else
            say "no Docker engine: installing Debian's docker.io and starting dockerd"
            command -v dockerd >/dev/null || apt_install docker.io
            command -v docker >/dev/null || die "docker.io installed no docker client"
            mkdir -p "$STATE"
            # Started below the other work of the machine (its builds and containers inherit it).
            setsid nohup nice -n 10 dockerd >"$STATE/dockerd.log" 2>&1 < /dev/null &
        fi
        for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
        docker info >/dev/null 2>&1 || die "dockerd did not start; its log: $(tail -20 "$STATE/dockerd.log")"
    fi
    local have
    have=$(compose_version)
    if [ -z "$have" ] || ! version_ge "$have" "$COMPOSE_MIN" || ! docker buildx version >/dev/null 2>&1; then
        is_root_debian || die "Docker Compose ${have:-missing} (need >= $COMPOSE_MIN, with buildx): install a newer docker-compose-plugin"
        say "Docker Compose ${have:-missing} and buildx: installing the plugins of Debian 13"
        install_trixie_plugins
        have=$(compose_version)
        version_ge "$have" "$COMPOSE_MIN" || die "Docker Compose $have is still older than $COMPOSE_MIN"
    fi
    echo "engine: Docker $(docker version --format '{{.Server.Version}}'), Compose $have, $(docker buildx version | cut -d' ' -f1-2)"
}

# kustomize: the host's, kubectl's built-in one, or Debian 13's package (unpacked, not installed).
ensure_kustomize() {
    if command -v kustomize >/dev/null; then KUSTOMIZE="kustomize build"
    elif command -v kubectl >/dev/null && kubectl kustomize --help >/dev/null 2>&1; then KUSTOMIZE="kubectl kustomize"
    elif [ -x "$STATE/kustomize/usr/bin/kustomize" ]; then KUSTOMIZE="$STATE/kustomize/usr/bin/kustomize build"
    elif is_root_debian; then
        install_trixie_plugins kustomize
        KUSTOMIZE="$STATE/kustomize/usr/bin/kustomize build"
    else
        die "no kustomize (nor kubectl): install one to validate deploy/kubernetes"
    fi
    export KUSTOMIZE
}

# --- 2. images --------------------------------------------------------------------------

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# An image from a registry, if one serves it (once: a failed pull is remembered for the run).
PULLS_WORK=${WORKBENCH_TEST_PULL:-unknown}
pulled() {
    have_image "$1" && return 0
    [ "$PULLS_WORK" = no ] && return 1
    if timeout 120 docker pull -q "$1" >/dev/null 2>&1; then PULLS_WORK=yes; return 0; fi
    PULLS_WORK=no
    echo "cannot pull $1: building stand-ins locally"
    return 1
}

# The Debian base of the stand-ins: debootstrap minbase, the host's extra CA certificates
# (TLS to the registries may pass a proxy with a CA of its own), docker import.
build_base() {
    local suite=$1 tag=workbench-test/debian:$1 rootfs=$STATE/rootfs-$1
    have_image "$tag" && return 0
    say "base image $tag (debootstrap, once)"
    command -v debootstrap >/dev/null || apt_install debootstrap
    if [ ! -f "$rootfs/.complete" ]; then
        rm -rf "$rootfs"
        nice -n 10 debootstrap --variant=minbase --include=ca-certificates "$suite" "$rootfs" \
            "$(debian_mirror)" \
            >"$STATE/debootstrap-$suite.log" 2>&1 || die "debootstrap $suite failed: $(tail -5 "$STATE/debootstrap-$suite.log")"
        touch "$rootfs/.complete"
    fi
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
        chroot "$rootfs" update-ca-certificates >/dev/null 2>&1 \
            || die "update-ca-certificates in the $suite base failed"
    fi
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
    tar -C "$rootfs" --exclude=./.complete -c . | docker import \
        -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        -c 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
        -c 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
        -c 'CMD ["bash"]' - "$tag" >/dev/null
    rm -rf "$rootfs"
}

build_standin() {  # tag, folder under deploy/test/images
    have_image "$1" && return 0
    say "stand-in image $1"
    nice -n 10 docker build -q -t "$1" "$HERE/images/$2" >/dev/null || die "building $1 failed"
}

ensure_images() {
    local overrides=()
    # backend/Dockerfile starts FROM these; stand-ins take their names.
    pulled python:3.11-slim || { build_base bookworm; build_standin python:3.11-slim python; }
    pulled node:20-slim || { build_base trixie; build_standin node:20-slim node; }
    # The infrastructure: the images the compose files name, or stand-ins by an override.
    if pulled "$(image_of postgres)" && pulled "$(image_of redis)" && pulled "$(image_of minio)" && pulled "$(image_of minio-init)" \
        && pulled "$(image_of proxy)"; then
        COMPOSE_FILES_EXTRA=()
    else
        build_base bookworm
        build_standin workbench-test/postgres:15 postgres
        build_standin workbench-test/redis:7.0 redis
        build_standin workbench-test/minio:seaweedfs minio
        build_standin workbench-test/nginx:debian nginx
        COMPOSE_FILES_EXTRA=(-f "$HERE/compose.standins.yml")
    fi
}

image_of() {  # the image a service of the compose files names
    awk -v svc="  $1:" '$0 == svc {found = 1; next} found && /^  [a-z]/ {exit}
        found && $1 == "image:" {print $2; exit}' "$ROOT/docker-compose.infra.yml" "$ROOT/docker-compose.scale.yml"
}

# --- 3. the stack and its checks ---------------------------------------------------------

compose() { docker compose -p "$PROJECT" -f "$ROOT/docker-compose.yml" "${COMPOSE_FILES_EXTRA[@]}" "$@"; }

# What the backend and the sandbox service said last: the evidence of a failure, printed
# before it ends the run (and the cleanup removes the containers, logs and all).
stack_logs() {
    say "the last lines of the backend's and the sandbox service's logs"
    compose logs --no-color --tail 80 backend sandbox || true
}

ENGINE_OK=
cleanup() {
    local status=$?
    if [ -z "$ENGINE_OK" ]; then
        [ $status = 0 ] || printf '\ntest-deploy: FAILED (exit %s) before an engine was ready, in %ss\n' "$status" "$(elapsed)" >&2
        exit $status
    fi
    if [ "$MODE" = prepare ]; then  # nothing was started: no stack to take down
        printf '\ntest-deploy --prepare: %s in %ss\n' "$([ $status = 0 ] && echo done || echo FAILED)" "$(elapsed)"
        exit $status
    fi
    if [ -n "${WORKBENCH_TEST_KEEP:-}" ]; then
        say "WORKBENCH_TEST_KEEP: the stack stays up (docker compose -p $PROJECT ... down -v to remove it)"
    else
    say "cleaning up (containers, networks, volumes of $PROJECT; images are kept)"
    docker compose -p "$PROJECT" -f "$ROOT/docker-compose.yml" -f "$ROOT/docker-compose.scale.yml" \
        "${COMPOSE_FILES_EXTRA[@]}" ${COMPOSE_FILES_EXTRA:+-f "$HERE/compose.standins-scale.yml"} \
        down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
    fi
    say "disk used by Docker"
    docker system df || true
    printf '\ntest-deploy: %s in %ss\n' "$([ $status = 0 ] && echo passed || echo FAILED)" "$(elapsed)"
    exit $status
}

main() {
    cd "$ROOT"
    COMPOSE_FILES_EXTRA=()
    trap cleanup EXIT
    say "engine"
    ensure_engine
    ENGINE_OK=1
    say "images"
    ensure_images
    local images_done=$(elapsed)

    # The stack's settings, from the environment as an operator's .env would give them.
    # Ports other than the defaults: the host may run its own Postgres, Redis, S3 or backend.
    local gateway llm_port
    # The default bridge's address on this host (Docker 20.10 leaves IPAM's Gateway empty).
    gateway=$(docker network inspect bridge --format '{{range .IPAM.Config}}{{.Gateway}}{{end}}')
    [ -n "$gateway" ] || gateway=$(ip -4 -o addr show docker0 2>/dev/null | awk '{print $4}' | cut -d/ -f1)
    [ -n "$gateway" ] || die "no address of Docker's bridge to serve the scripted model on"
    llm_port=${WORKBENCH_TEST_LLM_PORT:-18099}
    export WORKBENCH_PORT=${WORKBENCH_TEST_PORT:-18000} POSTGRES_PORT=15432 REDIS_PORT=16379 \
        MINIO_API_PORT=19000 MINIO_CONSOLE_PORT=19001
    export SECRET_KEY=deploy-test-secret-key-0123456789abcdef ADMIN_EMAIL=admin@example.com \
        ADMIN_PASSWORD=deploy-test-password POSTGRES_PASSWORD=deploy-test-pg S3_SECRET_KEY=deploy-test-s3
    export LLM_MODEL=openai/scripted LLM_API_BASE=http://$gateway:$llm_port/v1 LLM_API_KEY=deploy-test-llm-key \
        LLM_MODELS=openai/scripted LLM_TIMEOUT_SECONDS=10 LLM_MAX_RETRIES=0 AGENT_MAX_STEPS=4 \
        AGENT_PLANNING_INTERVAL=0 AGENT_VERIFY_ROUNDS=0 SANDBOX_STEP_TIMEOUT_SECONDS=20 \
        SANDBOX_MEMORY_MB=1024 SANDBOX_SPARE_WORKERS=0 SESSION_LOCK_TTL_SECONDS=10 \
        SANDBOX_SERVICE_MEMORY=4g ENVIRONMENT=development
    export WORKBENCH_DEPLOY_PROJECT=$PROJECT WORKBENCH_DEPLOY_URL=http://127.0.0.1:$WORKBENCH_PORT \
        WORKBENCH_DEPLOY_LLM_BIND=$gateway:$llm_port \
        WORKBENCH_DEPLOY_COMPOSE="docker compose -p $PROJECT -f $ROOT/docker-compose.yml ${COMPOSE_FILES_EXTRA[*]}" \
        WORKBENCH_DEPLOY_SCALE_FILES="-f $ROOT/docker-compose.scale.yml${COMPOSE_FILES_EXTRA:+ -f $HERE/compose.standins-scale.yml}"

    say "building the backend's image (backend/Dockerfile, as it is)"
    compose build || die "the backend's image did not build"
    local build_done=$(elapsed)

    if [ "$MODE" = prepare ]; then
        say "kustomize"
        ensure_kustomize
        printf '\ntimes: engine and images %ss, backend image %ss, all %ss\n' \
            "$images_done" "$((build_done - images_done))" "$(elapsed)"
        return 0
    fi

    say "the stack and the checks against it"
    (cd "$ROOT/backend" && make -s -C "$ROOT" deps >/dev/null \
        && $UV run --frozen pytest -p no:cacheprovider -o addopts="" -x -v -s \
            tests/deploy/deploy_checks.py) || { stack_logs; die "checks against the deployed stack failed"; }
    local checks_done=$(elapsed)

    # One backend again (the scale file's proxy removed), with the limits the red team
    # attacks (tests/redteam/conftest.py, SETTINGS; the fixture checks the backend has them).
    say "the red team through the stack (tests/redteam, mode compose)"
    export SANDBOX_DISK_MB=64 SANDBOX_ARTIFACTS_MB=16 SESSION_ARTIFACTS_MB=40 \
        SANDBOX_MEMORY_MB=768 SANDBOX_STEP_TIMEOUT_SECONDS=60 AGENT_MAX_STEPS=3
    compose up -d --wait --remove-orphans --timeout 10 >/dev/null \
        || { compose logs --no-color --tail 60 || true; die "the stack did not come up with the red team's settings"; }
    # The hostile SQL statements go to this machine's databases through the drivers, never
    # through the stack: `make test-backend` runs them; they are not repeated here.
    (cd "$ROOT/backend" && $UV run --frozen pytest -p no:cacheprovider -o addopts="" -q -ra \
        --durations=5 --ignore=tests/redteam/test_source_statements.py tests/redteam) \
        || { stack_logs; die "the red team found a way through the deployed stack"; }
    local redteam_done=$(elapsed)

    say "Kubernetes overlays"
    ensure_kustomize
    (cd "$ROOT/backend" && $UV run --frozen python "$HERE/kubernetes.py") || die "a Kubernetes overlay is not valid"

    printf '\ntimes: engine and images %ss, backend image %ss, checks %ss, red team %ss, all %ss\n' \
        "$images_done" "$((build_done - images_done))" "$((checks_done - build_done))" \
        "$((redteam_done - checks_done))" "$(elapsed)"
}

main "$@"; exit
