export declare function nodeFlagsFor(command: string): readonly string[];
export declare const NODE_FLAGS: readonly string[];
export declare function nodeEnvFor(command: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
