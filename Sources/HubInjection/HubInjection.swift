// Module HubInjection.
