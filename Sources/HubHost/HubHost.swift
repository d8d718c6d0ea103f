// Module HubHost.
