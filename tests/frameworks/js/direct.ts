// The live baseline (FW_DIRECT=1, see vitest.config.ts): the same API as
// mcpcassette/vitest's `cassette`, handing out the server itself.
export const cassette = {
  stdio(options: { command: string; args?: string[]; env?: Record<string, string> }) {
    const params: { command: string; args: string[]; env?: Record<string, string> } = {
      command: options.command,
      args: options.args ?? [],
    };
    if (options.env) params.env = options.env;
    return params;
  },
  async http(options: string | { upstream: string }) {
    const url = typeof options === "string" ? options : options.upstream;
    return { url, close: async () => null };
  },
};
