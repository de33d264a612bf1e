// The values an env reports as signals (outcome.*, state.*, env.*) and reward conditions read:
// what an env produces and the runtime's reward evaluation consumes.

export type SignalValue = number | boolean | string;
