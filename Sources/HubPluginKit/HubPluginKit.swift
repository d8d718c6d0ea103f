// Module HubPluginKit.
