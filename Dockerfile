# syntax=docker/dockerfile:1
#
# Janus: `janus run` (the main job) by default; `docker run <image> controller|validate|...` for
# the other commands. The image runs src/ compiled to JavaScript (npm run build, tsconfig.build.json):
# Node could strip the types itself, but then keeps its compiler and both forms of every module in
# memory, 30 MiB more resident for the controller.
#
# The base image is pinned by its exact version tag (Node 24.21.0 on Debian trixie, slim); the
# same tag in both stages, so the modules are installed by the Node that runs them. Renovate
# (renovate.json, preset docker:pinDigests) adds the digest (…-trixie-slim@sha256:…) and keeps
# tag and digest current, so builds are bit-for-bit repeatable; this file is edited where no
# registry is reachable, hence the tag alone until Renovate's first pull request.
ARG NODE_IMAGE=node:24.21.0-trixie-slim
# The Go that builds the render tools: the version the tests build them with (go.mod's `go`
# line is 1.26), pinned the same way.
ARG GO_IMAGE=golang:1.26.8-trixie

# ── The render tools of sources (docs/sources.md, "The sandbox"): kustomize and helm built from ──
# the same pinned modules the tests build (test/kube-testenv/kustomize/ and helm/), by the same
# script, CGO_ENABLED=0 and -trimpath: static binaries, no downloaded release.
FROM ${GO_IMAGE} AS render-tools
WORKDIR /src
COPY test/kube-testenv/build-render-tools.sh test/kube-testenv/lib.sh ./
COPY test/kube-testenv/kustomize/go.mod test/kube-testenv/kustomize/go.sum test/kube-testenv/kustomize/tools.go ./kustomize/
COPY test/kube-testenv/helm/go.mod test/kube-testenv/helm/go.sum test/kube-testenv/helm/tools.go ./helm/
ENV GOTOOLCHAIN=local
RUN bash build-render-tools.sh --into /out && /out/kustomize version && /out/helm version --short

# ── Production dependencies, from the lockfile, without install scripts (none is needed). ──
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# ── src/ compiled to dist/, with the dev dependencies that takes (TypeScript, Node's types). ──
FROM ${NODE_IMAGE} AS compile
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm ci --ignore-scripts
COPY src ./src
RUN npm run build

# ── Runtime: the compiled program, production modules, a non-root user, a writable cache only. ──
FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="janus" \
      org.opencontainers.image.description="Transactional GitOps for Kubernetes: all-or-nothing multi-resource changes from Git, health-gated, with every apply and rollback recorded in Git" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="docker.io/library/${NODE_IMAGE}"
ENV NODE_ENV=production \
    JANUS_CACHE_DIR=/var/cache/janus
# The runtime needs node alone: npm, npx and corepack are attack surface nobody here uses.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=compile /app/dist ./dist
COPY package.json ./
# kustomize and helm, on the PATH, where --kustomize-path and --helm-path default to.
COPY --from=render-tools /out/kustomize /out/helm /usr/local/bin/
# The only path Janus writes: with readOnlyRootFilesystem, mount an emptyDir here (manifests/deployment.yaml).
RUN mkdir -p /var/cache/janus && chown 10001:10001 /var/cache/janus
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["node", "dist/cli/launch.js"]
CMD ["run"]
