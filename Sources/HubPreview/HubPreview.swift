// Module HubPreview.
