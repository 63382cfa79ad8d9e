# threat-mirror as a sidecar: syncs into /data/threat-mirror.db, serves /healthz, /readyz, /metrics on 9464.

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
COPY drizzle ./drizzle
COPY test/bench ./test/bench
RUN npm run build && npm prune --omit=dev

# --- runtime: slim Node 22 LTS, no compiler, non-root ---
FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    THREAT_MIRROR_DB=/data/threat-mirror.db \
    THREAT_MIRROR_HTTP_PORT=9464 \
    THREAT_MIRROR_HTTP_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/drizzle ./drizzle
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["node", "dist/src/healthcheck.js"]
# Exec form on the CLI file itself: its shebang (env -S node <heap flags>) execs node, so node is
# PID 1 and receives SIGTERM; it installs its own SIGTERM/SIGINT handlers (PID 1 gets no default
# ones) and spawns no children, so no init process is needed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/dist/src/cli.js"]
