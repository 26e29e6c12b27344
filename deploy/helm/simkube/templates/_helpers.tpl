{{/*
Labels. Every object carries app.kubernetes.io/part-of=simkube and its component's
app.kubernetes.io/name, as in the kustomize overlays, plus Helm's release labels (which the
test comparing the chart with the overlays strips). Selectors use the name label alone, as
the overlays do: one release per cluster. With bare (the generated ConfigMaps and the group
namespace, as in the overlays) the name label is left out.
*/}}
{{- define "simkube.labels" -}}
{{- if not .bare }}
app.kubernetes.io/name: {{ .name }}
{{- end }}
app.kubernetes.io/part-of: simkube
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* Object metadata: name, namespace (the release's unless given) and labels. */}}
{{- define "simkube.metadata" -}}
name: {{ .objectName | default .name }}
{{- if not .clusterScoped }}
namespace: {{ .namespace | default .root.Release.Namespace }}
{{- end }}
labels:
  {{- include "simkube.labels" . | trim | nindent 2 }}
{{- end -}}

{{/* The simkube-py image. */}}
{{- define "simkube.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* An in-cluster service address: name.namespace.svc:port. */}}
{{- define "simkube.address" -}}
{{ .name }}.{{ .root.Release.Namespace }}.svc:{{ .port }}
{{- end -}}

{{/* The pod security context of simkube-py pods (the image's uid 10001). */}}
{{- define "simkube.podSecurity" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile: {type: RuntimeDefault}
{{- end -}}

{{- define "simkube.containerSecurity" -}}
allowPrivilegeEscalation: false
capabilities: {drop: [ALL]}
{{- end -}}

{{- define "simkube.pullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
- name: {{ . }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
gRPC probes, or TCP ones when the port serves TLS: the kubelet's gRPC probe speaks plaintext
only. Takes port, tls, startup (bool) and the periods.
*/}}
{{- define "simkube.probe" -}}
{{- if .tls }}
tcpSocket: {port: {{ .port }}}
{{- else }}
grpc: {port: {{ .port }}}
{{- end }}
{{- end -}}

{{/* The volume and mount of a service's TLS Secret at /etc/simkube/tls. */}}
{{- define "simkube.tlsMount" -}}
- {name: tls, mountPath: /etc/simkube/tls, readOnly: true}
{{- end -}}
{{- define "simkube.tlsVolume" -}}
- name: tls
  secret: {secretName: {{ . }}}
{{- end -}}
