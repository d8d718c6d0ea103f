@_exported import HubVocabulary

// The SDK speaks the vocabulary it shares with the host (geometry, colour, text style, layout traits, selection
// state, action trigger, JSON): one definition of each, in HubVocabulary, linked statically into every plugin as
// the SDK is. Only the C ABI crosses into the host; these types never do.

/// Selection states (Hub's HUBComponentSelectionState).
public typealias HubSelectionState = SelectionState

/// What triggered an action.
public typealias HubActionTrigger = ActionTrigger

/// A parsed JSON value (custom data, action data, UI state): `JSONValue(parsing:)`, `["key"]`, `[index]`,
/// `.stringValue`, `.numberValue`, `.boolValue`, `.arrayValue`, `.objectValue`.
public typealias HubJSON = JSONValue
