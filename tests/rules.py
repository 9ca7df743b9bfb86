"""The Kubernetes rules and the rules shared by several stores of a cloud, as the refusal
messages state them, shared by the bad-input tables (written out: a changed message fails the
tests)."""

DNS_LABEL = (
    "a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter "
    "or digit, at most 63 characters)"
)
DNS_SUBDOMAIN = (
    "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending with a "
    "letter or digit, at most 253 characters)"
)
QUALIFIED = (
    "a Kubernetes qualified name (a name of at most 63 letters, digits, '-', '_' and '.', "
    "starting and ending with a letter or digit, optionally after a DNS-1123 subdomain prefix "
    "and '/', e.g. team or example.com/team)"
)
LABEL_VALUE = (
    "a Kubernetes label value (at most 63 letters, digits, '-', '_' and '.', starting and "
    "ending with a letter or digit, or empty)"
)
NAME_CHARS = (
    "1 to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit (it "
    "is the value of the {label} label on every Kubernetes object it makes)"
)
STORE_NAME = "store name must be " + NAME_CHARS.format(label="modelstore.pulumi.com/store")
COMPONENT_NAME = "component name must be " + NAME_CHARS.format(
    label="modelstore.pulumi.com/component"
)
NO_BACKSTEPS = "a path without '..' segments"
HF_HOME_MOUNT = (
    "a path other than /tmp/hf-home for readers (their containers mount a writable emptyDir "
    "there for HF_HOME)"
)
HF_HOME_CLAIM = (
    "a name other than hf-home when the store has readers (their pods get an emptyDir volume "
    "of that name for HF_HOME)"
)
SIZE = (
    "a Kubernetes quantity with a unit, e.g. '100Gi' (binary Ki, Mi, Gi, Ti, Pi, Ei or decimal "
    "k, M, G, T, P, E)"
)
MAX_GIB = "at most 8589934591 (GiB: Kubernetes caps a quantity at 2^63-1 bytes)"

# Azure
SUBNET_ID_RULE = (
    "a subnet resource id (/subscriptions/<subscription guid>/resourceGroups/<rg>/providers/"
    "Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>, with valid Azure names: a "
    "virtual network 2-64 and a subnet 1-80 letters, digits, '_', '.' and '-', starting with a "
    "letter or digit, ending with a letter, digit or '_')"
)
RG_RULE = (
    "a resource group name (1-90 letters, digits, '_', '-', '.', '(' and ')', not ending with '.')"
)
