// Kubernetes name rules the kubelet applies to a device plugin's resource name
// (IsExtendedResourceName; docs/kubelet-versions.md). Pure.
#pragma once

#include <string>
#include <string_view>

namespace rdmadp::config {

// An ASCII letter or digit.
bool IsAsciiAlnum(char c);
// The Go plugin's rule for a resourceName (its ValidateConfigs): ^[a-zA-Z0-9_]+$.
bool GoResourceNameOk(std::string_view name);

// Empty when the kubelet accepts `name` as an extended resource name, else the reason.
std::string ExtendedResourceNameProblem(std::string_view name);

// Empty when `s` is a DNS-1123 subdomain, else the reason.
std::string DnsSubdomainProblem(std::string_view s);
// Empty when `s` is a DNS-1123 label (a namespace name), else the reason.
std::string DnsLabelProblem(std::string_view s);

// `text` as a DNS label: lower case, [a-z0-9-], no '-' at either end, at most 63
// characters ("hca_shared_devices_a" -> "hca-shared-devices-a"; "x" if nothing is left).
// The DRA front end names pools and DeviceClasses with it, so two resource names with the
// same label would share them (validate rejects that).
std::string DnsLabel(std::string_view text);

}  // namespace rdmadp::config
