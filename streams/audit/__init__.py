"""The audit trail: the tool_invocation tables (store, sqlite, postgres, migrations) and the
sink that feeds them."""
