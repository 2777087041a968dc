// Package deploy holds schedscope's recipes for running sharded load
// under the schedulers users have (docs/sharded-load.md). This test checks
// the Kubernetes manifests against the real API types, strictly: a field
// Kubernetes does not know is an error, as `kubectl apply
// --validate=strict` would make it.
package deploy

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// startAt stands in for the START_AT that envsubst fills in.
const startAt = "2026-12-01T21:00:00Z"

// decode reads a multi-document manifest after substituting env, each
// document strictly into the API type its kind names.
func decode(t *testing.T, path string, env map[string]string) []any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for k, v := range env {
		text = strings.ReplaceAll(text, "${"+k+"}", v)
	}
	if m := regexp.MustCompile(`\$\{[A-Za-z_]+\}`).FindString(text); m != "" {
		t.Fatalf("%s: %s is left for envsubst but the docs name only %v", path, m, env)
	}
	var out []any
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("%s: document %d: %v", path, i+1, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "batch/v1 Job":
			obj = &batchv1.Job{}
		case "v1 PersistentVolumeClaim":
			obj = &corev1.PersistentVolumeClaim{}
		default:
			t.Fatalf("%s: document %d: unexpected %s %s", path, i+1, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s: document %d (%s): %v", path, i+1, tm.Kind, err)
		}
		out = append(out, obj)
	}
	return out
}

func stripComments(doc string) []byte {
	var b bytes.Buffer
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.Bytes()
}

// flagValue returns the value of --name=V in args, and whether it is there.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func TestShardsJob(t *testing.T) {
	objs := decode(t, "k8s/shards-job.yaml", map[string]string{"START_AT": startAt})
	var job *batchv1.Job
	var pvc *corev1.PersistentVolumeClaim
	for _, o := range objs {
		switch o := o.(type) {
		case *batchv1.Job:
			job = o
		case *corev1.PersistentVolumeClaim:
			pvc = o
		}
	}
	if job == nil || pvc == nil {
		t.Fatalf("want a Job and a PersistentVolumeClaim, got %d documents", len(objs))
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed (JOB_COMPLETION_INDEX is the shard)", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
		t.Fatalf("completions %v, parallelism %v: want both set and equal, so every shard runs at once", s.Completions, s.Parallelism)
	}
	n := int(*s.Completions)
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 || s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("backoffLimit %v, restartPolicy %q: want 0 and Never (a shard run again would start out of step)", s.BackoffLimit, s.Template.Spec.RestartPolicy)
	}
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	if c.Args[0] != "load" {
		t.Errorf("args %q: want schedscope load", c.Args)
	}
	if v, _ := flagValue(c.Args, "shards"); v != fmt.Sprint(n) {
		t.Errorf("--shards=%q, want the Job's completions, %d", v, n)
	}
	if v, _ := flagValue(c.Args, "start-at"); v != "$(START_AT)" {
		t.Errorf("--start-at=%q, want $(START_AT)", v)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if at, err := time.Parse(time.RFC3339, env["START_AT"].Value); err != nil || at.Format(time.RFC3339) != startAt {
		t.Errorf("START_AT %q after envsubst: want %s (%v)", env["START_AT"].Value, startAt, err)
	}
	idx := env["JOB_COMPLETION_INDEX"].ValueFrom
	if idx == nil || idx.FieldRef == nil || idx.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("JOB_COMPLETION_INDEX %+v: want the completion-index annotation", env["JOB_COMPLETION_INDEX"])
	}
	// Results: one directory per shard, on a volume every pod mounts, the
	// ReadWriteMany claim merge-job.yaml reads.
	out, _ := flagValue(c.Args, "out")
	mount := mountFor(t, c, out)
	if want := mount.MountPath + "/shard-$(JOB_COMPLETION_INDEX)"; out != want {
		t.Errorf("--out=%q, want %q", out, want)
	}
	claim := claimOf(t, s.Template.Spec, mount.Name)
	if claim != pvc.Name || !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("results volume claims %q with access %v; want the manifest's claim %q, ReadWriteMany (the shards run on several nodes)", claim, pvc.Spec.AccessModes, pvc.Name)
	}

	// merge-job.yaml merges exactly these shards from that claim.
	merge := decode(t, "k8s/merge-job.yaml", nil)
	mj, ok := merge[0].(*batchv1.Job)
	if len(merge) != 1 || !ok {
		t.Fatalf("merge-job.yaml: want one Job")
	}
	mc := mj.Spec.Template.Spec.Containers[0]
	if claimOf(t, mj.Spec.Template.Spec, mc.VolumeMounts[0].Name) != pvc.Name {
		t.Errorf("merge-job.yaml reads another volume than the shards' claim %q", pvc.Name)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("%s/shard-%d", mc.VolumeMounts[0].MountPath, i))
	}
	var dirs []string
	for _, a := range mc.Args[1:] {
		if !strings.HasPrefix(a, "--") {
			dirs = append(dirs, a)
		}
	}
	if mc.Args[0] != "merge" || !slices.Equal(dirs, want) {
		t.Errorf("merge-job.yaml args %q: want merge of %q", mc.Args, want)
	}
}

// mountFor returns the container's volume mount that path lies under.
func mountFor(t *testing.T, c corev1.Container, path string) corev1.VolumeMount {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if strings.HasPrefix(path, m.MountPath+"/") {
			return m
		}
	}
	t.Fatalf("--out=%s is on no mounted volume (mounts %+v): the results would die with the pod", path, c.VolumeMounts)
	return corev1.VolumeMount{}
}

// claimOf returns the claim of the pod's volume name.
func claimOf(t *testing.T, spec corev1.PodSpec, name string) string {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name == name && v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	t.Fatalf("volume %q is no persistent volume claim", name)
	return ""
}
