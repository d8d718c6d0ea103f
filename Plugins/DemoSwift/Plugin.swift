// Swift demo plugin.
