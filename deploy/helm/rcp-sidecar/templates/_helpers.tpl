{{/*
Names and labels.
*/}}
{{- define "rcp-sidecar.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "rcp-sidecar.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "rcp-sidecar.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rcp-sidecar.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "rcp-sidecar.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "rcp-sidecar.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "rcp-sidecar.configMapName" -}}
{{- default (printf "%s-config" (include "rcp-sidecar.fullname" .)) .Values.existingConfigMap }}
{{- end }}

{{- define "rcp-sidecar.secretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else if .Values.secrets }}
{{- printf "%s-credentials" (include "rcp-sidecar.fullname" .) }}
{{- end }}
{{- end }}

{{- define "rcp-sidecar.cursorSecretName" -}}
{{- default (printf "%s-cursor" (include "rcp-sidecar.fullname" .)) .Values.cursorKey.existingSecret }}
{{- end }}

{{/*
rcp-sidecar.config is the configuration file: .Values.config, with
server.cursor_keys read from RCP_CURSOR_KEY unless it sets its own, and
state.url set from .Values.state.url when that is given.
*/}}
{{- define "rcp-sidecar.config" -}}
{{- $cfg := deepCopy .Values.config }}
{{- $server := $cfg.server | default dict }}
{{- if not (hasKey $server "cursor_keys") }}
{{- $_ := set $server "cursor_keys" (list (dict "env" "RCP_CURSOR_KEY")) }}
{{- end }}
{{- $_ := set $cfg "server" $server }}
{{- if .Values.state.url }}
{{- $state := deepCopy (default dict $cfg.state) }}
{{- $_ := set $state "url" .Values.state.url }}
{{- $_ := set $cfg "state" $state }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{- define "rcp-sidecar.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "rcp-sidecar.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
rcp-sidecar.listen is the address the sidecar listens on: every interface
standalone (the Service and kubelet's httpGet probes reach the pod IP), the
pod's loopback as a sidecar (only the pod's containers reach it).
*/}}
{{- define "rcp-sidecar.listen" -}}
{{- if eq .Values.mode "sidecar" }}127.0.0.1{{ else }}0.0.0.0{{ end }}:{{ .Values.http.port }}
{{- end }}

{{/*
rcp-sidecar.probe renders one probe (dict "root" . "path" "/readyz" "timing" .Values.probes.x).
*/}}
{{- define "rcp-sidecar.probe" -}}
{{- $v := .root.Values }}
{{- if eq $v.mode "sidecar" }}
exec:
  command: ["/usr/local/bin/rcp-healthcheck", {{ printf "http://127.0.0.1:%v%s" $v.http.port .path | quote }}]
{{- else }}
httpGet:
  path: {{ .path }}
  port: http
{{- end }}
{{ toYaml .timing }}
{{- end }}

{{/*
rcp-sidecar.container is the sidecar's container. In sidecar mode it is a
native sidecar: an init container with restartPolicy: Always, started (and
past its startup probe) before the application's containers and stopped
after them.
*/}}
{{- define "rcp-sidecar.container" -}}
{{- $v := .Values }}
- name: rcp-sidecar
  image: {{ printf "%s:%s" $v.image.repository (default .Chart.AppVersion $v.image.tag) | quote }}
  imagePullPolicy: {{ $v.image.pullPolicy }}
  {{- if eq $v.mode "sidecar" }}
  restartPolicy: Always
  {{- end }}
  args: ["--config", "/etc/rcp-sidecar/config.yaml"]
  env:
    - name: RCP_SERVER_HTTP_LISTEN
      value: {{ include "rcp-sidecar.listen" . | quote }}
    - name: RCP_SERVER_HTTP_BASE_PATH
      value: {{ $v.http.basePath | quote }}
    # A soft heap limit at the container's memory limit: the binary runs
    # the collector at GOGC=400, and this makes it collect harder before
    # the kernel would kill the container.
    - name: GOMEMLIMIT
      valueFrom:
        resourceFieldRef:
          resource: limits.memory
    # The key every replica seals and opens page cursors with.
    - name: RCP_CURSOR_KEY
      valueFrom:
        secretKeyRef:
          name: {{ include "rcp-sidecar.cursorSecretName" . }}
          key: {{ $v.cursorKey.secretKey }}
    {{- with $v.env }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with include "rcp-sidecar.secretName" . }}
  envFrom:
    - secretRef:
        name: {{ . }}
  {{- end }}
  {{- if ne $v.mode "sidecar" }}
  ports:
    - name: http
      containerPort: {{ $v.http.port }}
      protocol: TCP
  {{- end }}
  volumeMounts:
    - name: rcp-sidecar-config
      mountPath: /etc/rcp-sidecar
      readOnly: true
  startupProbe:
    {{- include "rcp-sidecar.probe" (dict "root" . "path" "/readyz" "timing" $v.probes.startup) | trim | nindent 4 }}
  readinessProbe:
    {{- include "rcp-sidecar.probe" (dict "root" . "path" "/readyz" "timing" $v.probes.readiness) | trim | nindent 4 }}
  livenessProbe:
    {{- include "rcp-sidecar.probe" (dict "root" . "path" "/healthz" "timing" $v.probes.liveness) | trim | nindent 4 }}
  resources:
    {{- toYaml $v.resources | nindent 4 }}
  securityContext:
    {{- toYaml $v.securityContext | nindent 4 }}
{{- end }}

{{/*
rcp-sidecar.volume is the configuration volume the container mounts.
*/}}
{{- define "rcp-sidecar.volume" -}}
- name: rcp-sidecar-config
  configMap:
    name: {{ include "rcp-sidecar.configMapName" . }}
{{- end }}

{{/*
rcp-sidecar.podAnnotations roll the pods when the configuration or the
chart's Secret changes.
*/}}
{{- define "rcp-sidecar.podAnnotations" -}}
{{- if not .Values.existingConfigMap }}
checksum/config: {{ include "rcp-sidecar.config" . | sha256sum }}
{{- end }}
{{- if and .Values.secrets (not .Values.existingSecret) }}
checksum/secrets: {{ toYaml .Values.secrets | sha256sum }}
{{- end }}
{{- with .Values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
rcp-sidecar.perReplicaState names what several standalone replicas would
each keep for themselves — sessions, rate limits — when the configuration
uses them but names no shared state store; "" when nothing is affected.
*/}}
{{- define "rcp-sidecar.perReplicaState" -}}
{{- $v := .Values }}
{{- $many := and (eq $v.mode "standalone") (or (gt (int $v.replicas) 1) (and $v.autoscaling.enabled (gt (int $v.autoscaling.maxReplicas) 1))) }}
{{- $store := or $v.state.url (and $v.config (hasKey $v.config "state")) }}
{{- if and $many (not $store) (not $v.existingConfigMap) }}
{{- $what := list }}
{{- if and $v.config (hasKey $v.config "session") }}{{ $what = append $what "retrieve sessions (sessionId suppression)" }}{{ end }}
{{- $rated := false }}
{{- $access := default dict (and $v.config $v.config.access) }}
{{- range (default list $access.keys) }}{{ if and .rate .rate.rps }}{{ $rated = true }}{{ end }}{{ end }}
{{- if and $access.jwt $access.jwt.rate $access.jwt.rate.rps }}{{ $rated = true }}{{ end }}
{{- if $rated }}{{ $what = append $what "per-key rate limits" }}{{ end }}
{{- join " and " $what }}
{{- end }}
{{- end }}

{{/*
rcp-sidecar.checkState fails the render when several replicas would each
keep sessions or rate limits of their own, unless state.allowPerReplica
accepts it (NOTES.txt then says what degrades).
*/}}
{{- define "rcp-sidecar.checkState" -}}
{{- $affected := include "rcp-sidecar.perReplicaState" . }}
{{- if and $affected (not .Values.state.allowPerReplica) }}
{{- fail (printf "several replicas (replicas > 1 or autoscaling) keep %s per replica without a shared state store: suppression would not cross replicas and each key would get its rate once per replica. Set state.url to a Valkey/Redis server the replicas share, or state.allowPerReplica=true to accept per-replica state." $affected) }}
{{- end }}
{{- end }}
