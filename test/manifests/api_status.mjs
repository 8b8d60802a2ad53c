// The failure answer of the fake kube-apiserver (fake_apiserver.mjs, node_status.mjs): it
// mirrors apimachinery's metav1.Status failure shape as kube-apiserver writes it
// (k8s.io/apimachinery/pkg/api/errors: a StatusError's ErrStatus, sent by the endpoints'
// responsewriters with the Status's code as the HTTP code). The keys come in the order the Go
// struct encodes them (kind, apiVersion, metadata, status, message, reason, details, code);
// reason and details are omitempty, so an absent (or empty) one is left out, as for a 500
// that is not a Status error (ErrorToAPIStatus: no reason).

// A failure: {code, message, status}, `status` the metav1.Status to send with HTTP `code`.
export function statusFailure(code, reason, message, details) {
  return { code, message,
    status: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, ...(reason ? { reason } : {}),
      ...(details ? { details } : {}), code } };
}
