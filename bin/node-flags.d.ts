export declare const NODE_FLAGS: readonly string[];
export declare const COMMANDS_WITH_NODE_FLAGS: readonly string[];
