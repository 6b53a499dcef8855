package deploy_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/cli"
)

func TestMain(m *testing.M) {
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	os.Exit(m.Run())
}

// manifests holds every object of k8s/*.yaml, decoded strictly.
type manifests struct {
	deploy   *appsv1.Deployment
	services map[string]*corev1.Service
	hpa      *autoscalingv2.HorizontalPodAutoscaler
	pdb      *policyv1.PodDisruptionBudget
	netpol   *networkingv1.NetworkPolicy
}

func load(t *testing.T) *manifests {
	t.Helper()
	files, err := filepath.Glob("k8s/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	m := &manifests{services: map[string]*corev1.Service{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj any
			switch tm.APIVersion + " " + tm.Kind {
			case "apps/v1 Deployment":
				m.deploy = &appsv1.Deployment{}
				obj = m.deploy
			case "v1 Service":
				obj = &corev1.Service{}
			case "autoscaling/v2 HorizontalPodAutoscaler":
				m.hpa = &autoscalingv2.HorizontalPodAutoscaler{}
				obj = m.hpa
			case "policy/v1 PodDisruptionBudget":
				m.pdb = &policyv1.PodDisruptionBudget{}
				obj = m.pdb
			case "networking.k8s.io/v1 NetworkPolicy":
				m.netpol = &networkingv1.NetworkPolicy{}
				obj = m.netpol
			default:
				t.Fatalf("%s: unexpected %s %s", f, tm.APIVersion, tm.Kind)
			}
			// Strict: an unknown or misspelt field is an error.
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s: %s: %v", f, tm.Kind, err)
			}
			if s, ok := obj.(*corev1.Service); ok {
				m.services[s.Name] = s
			}
		}
	}
	if m.deploy == nil || m.hpa == nil || m.pdb == nil || m.netpol == nil || len(m.services) != 2 {
		t.Fatalf("missing objects: %+v", m)
	}
	return m
}

func selects(t *testing.T, what string, sel *metav1.LabelSelector, podLabels map[string]string) {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() || !s.Matches(labels.Set(podLabels)) {
		t.Errorf("%s: selector %v does not select the pods %v (%v)", what, sel, podLabels, err)
	}
}

func TestManifestsAgree(t *testing.T) {
	m := load(t)
	d := m.deploy
	pod := d.Spec.Template
	selects(t, "Deployment", d.Spec.Selector, pod.Labels)
	selects(t, "PodDisruptionBudget", m.pdb.Spec.Selector, pod.Labels)
	selects(t, "NetworkPolicy", &m.netpol.Spec.PodSelector, pod.Labels)
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	port := func(p intstr.IntOrString) int32 {
		if p.Type == intstr.String {
			return ports[p.StrVal]
		}
		return p.IntVal
	}
	// The server listens where the container port says.
	var listen string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--listen="); ok {
			listen = v
		}
	}
	if listen != "0.0.0.0:"+itoa(ports["http"]) || !contains(c.Args, "--allow-non-loopback") {
		t.Errorf("--listen=%q with container port %d", listen, ports["http"])
	}
	// Probes hit /healthz and /readyz on that port.
	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{c.LivenessProbe, "/healthz"}, {c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || port(p.probe.HTTPGet.Port) != ports["http"] {
			t.Errorf("probe for %s: %+v", p.path, p.probe)
		}
	}
	// Both Services select the pods and reach the container port; the
	// peers Service is headless, and the peer URL template names it.
	for name, s := range m.services {
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(pod.Labels)) || len(s.Spec.Selector) == 0 {
			t.Errorf("Service %s does not select the pods", name)
		}
		for _, sp := range s.Spec.Ports {
			if port(sp.TargetPort) != ports["http"] {
				t.Errorf("Service %s targets port %v", name, sp.TargetPort)
			}
		}
	}
	peers := m.services["secexec-peers"]
	if peers == nil || peers.Spec.ClusterIP != corev1.ClusterIPNone || !peers.Spec.PublishNotReadyAddresses {
		t.Fatalf("secexec-peers must be headless and list draining pods: %+v", peers)
	}
	var tmpl string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--peer-url-template="); ok {
			tmpl = v
		}
	}
	if !strings.HasPrefix(tmpl, "http://{replica}."+peers.Name+".$(POD_NAMESPACE).svc.") || !strings.HasSuffix(tmpl, ":"+itoa(peers.Spec.Ports[0].Port)) {
		t.Errorf("peer URL template %q does not use Service %s", tmpl, peers.Name)
	}
	// Every replica signs and checks preview URLs with the same secret,
	// mounted from one Secret.
	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.Name] = vm.MountPath
	}
	previewSecret := ""
	for _, v := range pod.Spec.Volumes {
		if v.Name == "preview" && v.Secret != nil {
			previewSecret = v.Secret.SecretName
		}
	}
	if previewSecret == "" || mounts["preview"] == "" || !contains(c.Args, "--preview-secret-file="+mounts["preview"]+"/secret") {
		t.Errorf("preview secret: Secret %q mounted at %q, args %v", previewSecret, mounts["preview"], c.Args)
	}
	// The replica name is the pod IP, as the headless Service's DNS names it.
	if !contains(c.Args, "--replica=$(POD_IP)") || api.ReplicaName("10.1.2.3") != "10-1-2-3" {
		t.Errorf("replica: %v", c.Args)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["POD_IP"] != "status.podIP" || env["POD_NAMESPACE"] != "metadata.namespace" {
		t.Errorf("env %v", env)
	}
	// The snapshot store is shared S3, its credentials from a Secret
	// (never in args), reachable through the NetworkPolicy.
	secretEnv := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			secretEnv[e.Name] = e.ValueFrom.SecretKeyRef.Name
		}
	}
	store := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--snapshot-store="); ok {
			store = v
		}
		if strings.Contains(a, "AWS_") || strings.Contains(a, "@") {
			t.Errorf("credentials in args: %s", a)
		}
	}
	if !strings.HasPrefix(store, "s3://") || secretEnv["AWS_ACCESS_KEY_ID"] == "" || secretEnv["AWS_SECRET_ACCESS_KEY"] == "" {
		t.Errorf("snapshot store %q, secret env %v", store, secretEnv)
	}
	https := false
	for _, e := range m.netpol.Spec.Egress {
		for _, p := range e.Ports {
			https = https || p.Port != nil && p.Port.IntVal == 443
		}
	}
	if !https {
		t.Errorf("NetworkPolicy egress does not reach the S3 store: %+v", m.netpol.Spec.Egress)
	}
	// SIGTERM drains before the kubelet kills.
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g <= 30 || !contains(c.Args, "--drain-timeout=30s") {
		t.Errorf("grace period %v must exceed --drain-timeout", g)
	}
	// The HPA scales this Deployment; the NetworkPolicy admits the port.
	if ref := m.hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != d.Name || m.hpa.Spec.MinReplicas == nil || *m.hpa.Spec.MinReplicas < 2 {
		t.Errorf("HPA target %+v", ref)
	}
	if len(m.netpol.Spec.Ingress) == 0 || port(*m.netpol.Spec.Ingress[0].Ports[0].Port) != ports["http"] {
		t.Errorf("NetworkPolicy ingress %+v", m.netpol.Spec.Ingress)
	}
	// Hardening.
	sc := c.SecurityContext
	if pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot || sc == nil ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1 {
		t.Errorf("security context %+v %+v", pod.Spec.SecurityContext, sc)
	}
}

// TestManifestFlagsExist: every flag the Deployment passes is one the
// serve command has.
func TestManifestFlagsExist(t *testing.T) {
	m := load(t)
	var help bytes.Buffer
	if code := cli.Main(context.Background(), []string{"serve", "--help"}, nil, &help, &help); code != 0 {
		t.Fatalf("serve --help: %d %s", code, help.String())
	}
	args := m.deploy.Spec.Template.Spec.Containers[0].Args
	if args[0] != "serve" {
		t.Fatalf("args %v", args)
	}
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(a, "=")
		if !strings.HasPrefix(name, "--") || !strings.Contains(help.String(), "  "+name+" ") {
			t.Errorf("flag %s is not a serve flag", name)
		}
	}
	// The Dockerfile builds the command and runs set-up at build time.
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go build", "./cmd/secexec", "secexec eval", "buildwasm -out", "SECEXEC_USERLAND_DIR=", `ENTRYPOINT ["/usr/local/bin/secexec"]`, "USER 10001"} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if _, err := os.Stat("../cmd/secexec/main.go"); err != nil {
		t.Error(err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
