// Module HubRender.
