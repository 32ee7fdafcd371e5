"""The dns_technology intent provider (filled in below in this module)."""
