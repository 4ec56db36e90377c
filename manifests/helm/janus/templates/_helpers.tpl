{{/* The chart's name, or nameOverride. */}}
{{- define "janus.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name, the prefix of every object's name: fullnameOverride, else the release
name if it contains the chart's name ("janus", "janus-staging"), else <release>-<name>.
*/}}
{{- define "janus.fullname" -}}
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

{{- define "janus.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "janus.labels" -}}
helm.sh/chart: {{ include "janus.chart" . }}
app.kubernetes.io/name: {{ include "janus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: janus
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* What selects the controller's pods: name and component as in manifests/, and the release. */}}
{{- define "janus.selectorLabels" -}}
app.kubernetes.io/name: {{ include "janus.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end }}

{{/* The controller's ServiceAccount, also the name of its RBAC objects. */}}
{{- define "janus.serviceAccountName" -}}
{{- printf "%s-controller" (include "janus.fullname" .) }}
{{- end }}

{{/* The ClusterRole that namespaces bind to opt in. */}}
{{- define "janus.tenantClusterRole" -}}
{{- printf "%s-tenant" (include "janus.fullname" .) }}
{{- end }}

{{/* The Secret holding the repository URL, the token and the webhook secret. */}}
{{- define "janus.gitSecretName" -}}
{{- if .Values.git.repository }}
{{- printf "%s-git" (include "janus.fullname" .) }}
{{- else }}
{{- required "git.existingSecret or git.repository is required" .Values.git.existingSecret }}
{{- end }}
{{- end }}

{{/* The ConfigMap of the allowed-signers file: the chart's own when signatures.allowedSigners is set. */}}
{{- define "janus.allowedSignersName" -}}
{{- if .Values.signatures.allowedSigners }}
{{- printf "%s-allowed-signers" (include "janus.fullname" .) }}
{{- else }}
{{- required "signatures.existingConfigMap or signatures.allowedSigners is required" .Values.signatures.existingConfigMap }}
{{- end }}
{{- end }}

{{- define "janus.notificationsName" -}}
{{- if .Values.notifications.config }}
{{- printf "%s-notifications" (include "janus.fullname" .) }}
{{- else }}
{{- required "notifications.existingConfigMap or notifications.config is required" .Values.notifications.existingConfigMap }}
{{- end }}
{{- end }}

{{/* repository[:tag][@digest]; the tag defaults to the chart's appVersion. */}}
{{- define "janus.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/*
Refuses to install an installation of an instance that another one, in another namespace, serves
for an overlapping scope (docs/operations.md, Several installations): both would drive the same
Transactions. The cluster's InstanceClaims say which namespace serves which instance; a claim
renewed within its lease is a live installation. The controller refuses to start there too; this
says it before anything is installed. `helm template` and `--dry-run` look nothing up.
*/}}
{{- define "janus.checkInstanceClaims" -}}
{{- if lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "instanceclaims.tx.janus.io" }}
{{- $watch := .Values.watchNamespace | default "" }}
{{- $instance := .Values.instance | default "" }}
{{- range $claim := (lookup "tx.janus.io/v1alpha1" "InstanceClaim" "" "").items | default list }}
{{- $spec := $claim.spec }}
{{- $theirs := $spec.watchNamespace | default "" }}
{{- $age := sub (now | unixEpoch) (toDate "2006-01-02T15:04:05Z07:00" $spec.renewTime | unixEpoch) }}
{{- if and (eq ($spec.instance | default "") $instance) (ne $spec.controllerNamespace $.Release.Namespace) (or (eq $watch "") (eq $theirs "") (eq $watch $theirs)) (lt (int64 $age) (int64 $spec.leaseDurationSeconds)) }}
{{- fail (printf "the installation in namespace %s (InstanceClaim %s, renewed %ds ago) already serves %s for %s: this release in %s would drive the same Transactions. Set instance to a name of its own (and label its Transactions tx.janus.io/instance), or watchNamespace to a namespace the other does not watch, or uninstall the other" $spec.controllerNamespace $claim.metadata.name (int64 $age) (ternary "the default instance" (printf "instance %s" $instance) (eq $instance "")) (ternary "every namespace" (printf "namespace %s" $theirs) (eq $theirs "")) $.Release.Namespace) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
