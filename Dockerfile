# threat-mirror as a sidecar: syncs into /data/threat-mirror.db, serves /healthz, /readyz, /startupz, /metrics on 9464.
# See docs/container.md (health semantics, compose example, the checks in test/container/check.sh).

# --- build: compile TypeScript and the native better-sqlite3 module ---
FROM node:22-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
COPY drizzle ./drizzle
RUN npm run build && npm prune --omit=dev

# Only what the program loads, gathered in /runtime for one COPY: the compiled program without
# source maps, the stand-in or the demo; the migrations' SQL and journal (not drizzle-kit's
# snapshots); production node_modules without type declarations, source maps, TypeScript sources,
# tests and examples. On Node 22 the program opens SQLite through better-sqlite3 13
# (better-sqlite3-napi: src/db/sqlite.ts says why): of it, its JavaScript and the prebuilt binary of
# this platform only. better-sqlite3 12 keeps only its JavaScript, which drizzle-orm imports and
# which loads no binary until a database is opened with it: not the compiled .node, SQLite sources,
# object files and static library of its build (about 25 MB). Not prebuild-install, which only runs
# at install time. The Litestream 0.3 binary of the optional dependency stays (about 30 MB): a new
# pod restores its file from THREAT_MIRROR_RESTORE_FROM with it (docs/readers-and-replicas.md).
RUN mkdir -p /runtime/dist \
 && cp -r package.json drizzle node_modules /runtime/ \
 && cp -r dist/src dist/bin /runtime/dist/ \
 && cd /runtime \
 && rm -rf dist/src/standin drizzle/meta/*_snapshot.json \
 && find dist -name '*.map' -delete \
 && cd node_modules \
 && rm -rf .package-lock.json @types prebuild-install \
 && find . \( -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' -o -name '*.map' -o -name '*.ts' -o \( -name '*.md' ! -iname 'licen[cs]e*' \) -o -name '*.tsbuildinfo' \) -type f -delete \
 && find . -depth -type d \( -name test -o -name tests -o -name __tests__ -o -name examples -o -name example \) -exec rm -rf {} + \
 && rm -rf better-sqlite3/build better-sqlite3/deps better-sqlite3/src better-sqlite3/binding.gyp \
 && rm -rf better-sqlite3-napi/deps better-sqlite3-napi/src better-sqlite3-napi/binding.gyp \
 && find better-sqlite3-napi/prebuilds -type f ! -name "linux-$(node -p process.arch).node" -delete \
 && find . -depth -type d -empty -delete

# --- runtime: slim Node 22 LTS, no compiler, non-root ---
FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    THREAT_MIRROR_DB=/data/threat-mirror.db \
    THREAT_MIRROR_HTTP_PORT=9464 \
    THREAT_MIRROR_HTTP_HOST=0.0.0.0
WORKDIR /app
# Owned by root: the node user runs the program but cannot change it.
COPY --from=build /runtime /app
RUN mkdir -p /data && chown node:node /data \
 && ln -s /app/dist/bin/cli.js /usr/local/bin/threat-mirror
USER node
VOLUME ["/data"]
EXPOSE 9464
# Healthy once every organization's first sync has committed (or the volume already held a mirror),
# then for as long as the process lives: /healthz and /startupz (src/daemon/healthcheck.ts). Probed every
# 5 s so that compose's `depends_on: service_healthy` starts readers within seconds of the first
# sync; Docker 25's --start-interval would allow a longer interval after start-up, but older
# engines (Debian's docker.io 20.10) reject the flag. A first sync may take minutes on a large
# account: the start period keeps the container "starting", not "unhealthy", for 10 minutes.
HEALTHCHECK --interval=5s --timeout=5s --start-period=10m --retries=3 CMD ["node", "dist/src/daemon/healthcheck.js"]
# Exec form on the CLI file itself: its shebang (env -S node <heap flags>) execs node, so node is
# PID 1 and receives SIGTERM; it installs its own SIGTERM/SIGINT handlers (PID 1 gets no default
# ones). Its one child, Litestream during a restore (THREAT_MIRROR_RESTORE_FROM), is waited for, so
# no init process is needed (a wrapper's own children killed with it would stay as zombies).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/dist/bin/cli.js"]
