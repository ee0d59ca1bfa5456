/**
 * Failures of the local stack scripts. Each carries a message a person can act
 * on; the CLI prints only the message, so it must name the fix.
 */
export class StackError extends Error {
  override readonly name: string = 'StackError';
}

/** Configuration from the environment is unusable (bad port, bad address). */
export class StackConfigError extends StackError {
  override readonly name = 'StackConfigError';
}

/** A port we need is held by a process we did not start. */
export class PortInUseError extends StackError {
  override readonly name = 'PortInUseError';
  constructor(
    readonly port: number,
    message: string,
  ) {
    super(message);
  }
}

/** A server the user pointed us at (TEMPORAL_ADDRESS, MONGODB_URI) does not answer. */
export class ExternalServerUnreachableError extends StackError {
  override readonly name = 'ExternalServerUnreachableError';
}

/** A server we started did not become healthy in time, or died while starting. */
export class StartupFailedError extends StackError {
  override readonly name = 'StartupFailedError';
}

/** A tool (temporal CLI, ferretdb-local) could neither be found, installed nor built. */
export class ToolInstallError extends StackError {
  override readonly name = 'ToolInstallError';
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
