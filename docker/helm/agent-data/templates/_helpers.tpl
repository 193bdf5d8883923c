{{/* Chart name, overridable. */}}
{{- define "agent-data.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified name: the release name, suffixed with the chart name unless it already contains it. */}}
{{- define "agent-data.fullname" -}}
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

{{- define "agent-data.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agent-data.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agent-data.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The server pods only: the migration Job's pod must never receive Service traffic. */}}
{{- define "agent-data.serverSelectorLabels" -}}
{{ include "agent-data.selectorLabels" . }}
app.kubernetes.io/component: server
{{- end }}

{{- define "agent-data.labels" -}}
helm.sh/chart: {{ include "agent-data.chart" . }}
{{ include "agent-data.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "agent-data.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{- define "agent-data.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "agent-data.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding DATABASE_URL, API_KEYS and the other credentials. */}}
{{- define "agent-data.secretName" -}}
{{- .Values.existingSecret | default (include "agent-data.fullname" .) }}
{{- end }}

{{/*
"true" when the chart renders its own Secret from .Values.secrets, "" with existingSecret.
Fails early, with the value to set, when neither gives the credentials the server needs.
*/}}
{{- define "agent-data.chartSecret" -}}
{{- if and .Values.config.OAUTH_ISSUER (not .Values.config.OAUTH_RESOURCE) }}
{{- fail "config.OAUTH_RESOURCE is required with config.OAUTH_ISSUER: the https URL clients reach the server at (the ingress host)" }}
{{- end }}
{{- $given := list }}
{{- range $key, $value := .Values.secrets }}{{ if $value }}{{ $given = append $given $key }}{{ end }}{{ end }}
{{- if and .Values.existingSecret $given }}
{{- fail (printf "set either existingSecret or secrets.* (%s), not both" (join ", " $given)) }}
{{- end }}
{{- if not .Values.existingSecret }}
{{- if not .Values.secrets.databaseUrl }}
{{- fail "secrets.databaseUrl is required (or existingSecret): the chart runs the server against an external PostgreSQL" }}
{{- end }}
{{- if not (or .Values.secrets.apiKeys .Values.config.OAUTH_ISSUER) }}
{{- fail "secrets.apiKeys or config.OAUTH_ISSUER is required (or existingSecret): the server refuses to listen on the pod network without authentication" }}
{{- end }}
{{- print "true" }}
{{- end }}
{{- end }}

{{/* Environment variable names of the credentials in .Values.secrets. */}}
{{- define "agent-data.secretEnv" -}}
databaseUrl: DATABASE_URL
apiKeys: API_KEYS
openaiApiKey: OPENAI_API_KEY
qdrantApiKey: QDRANT_API_KEY
gptRouteToken: GPT_ROUTE_TOKEN
oauthIntrospectionClientSecret: OAUTH_INTROSPECTION_CLIENT_SECRET
backupApiKey: AGENT_DATA_API_KEY
{{- end }}

{{/* Seconds the pod has to stop: endpoint removal, request draining, then app.close(). */}}
{{- define "agent-data.terminationGracePeriodSeconds" -}}
{{- add .Values.shutdown.preStopSleepSeconds .Values.shutdown.drainTimeoutSeconds 15 }}
{{- end }}

{{/*
Label matchers that pick this release's series in the alert expressions:
prometheusRule.selector when given, else the job and namespace a ServiceMonitor produces.
*/}}
{{- define "agent-data.alertSelector" -}}
{{- if .Values.prometheusRule.selector }}
{{- .Values.prometheusRule.selector }}
{{- else }}
{{- printf "job=%q,namespace=%q" (include "agent-data.fullname" .) .Release.Namespace }}
{{- end }}
{{- end }}
