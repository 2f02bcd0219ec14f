// Root hooks for every test file: an unhandled rejection or exception anywhere fails the run
// instead of vanishing (the ioredis test-helpers habit).
const fail = (err: unknown) => {
  process.stderr.write(`unhandled: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exitCode = 1;
  throw err;
};
process.on('unhandledRejection', fail);

export const mochaHooks = {};
