"""The commands, by name, and the module that defines each (loaded only when it runs)."""

# command name -> (module in this package, the click command in it). A run imports only the
# module of the command it runs (click's documented pattern for lazily loaded subcommands).
COMMANDS = {
    "check": ("check_cmd", "check"),
    "fleet": ("fleet_cmd", "fleet"),
    "probe": ("probe_cmd", "probe"),
    "recommend": ("recommend_cmd", "recommend"),
    "scan": ("scan_cmd", "scan"),
    "schema": ("schema_cmd", "schema"),
    "table": ("table_cmd", "table"),
}
