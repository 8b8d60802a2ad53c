// Kubernetes name rules the kubelet applies to a device plugin's resource name
// (IsExtendedResourceName, reference/kubelet-contract.md §3). Pure.
#pragma once

#include <string>
#include <string_view>

namespace rdmadp::config {

// Empty when the kubelet accepts `name` as an extended resource name, else the reason.
std::string ExtendedResourceNameProblem(std::string_view name);

// Empty when `s` is a DNS-1123 subdomain, else the reason.
std::string DnsSubdomainProblem(std::string_view s);

}  // namespace rdmadp::config
