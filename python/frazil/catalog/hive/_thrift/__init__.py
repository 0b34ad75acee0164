"""Python bindings of the Hive Metastore's Thrift interface, generated (see README.md here)."""
