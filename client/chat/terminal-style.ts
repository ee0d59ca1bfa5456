/** ANSI styling that turns into plain text when colour is off. */
export interface Painter {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
}

const codes = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], magenta: [35, 39], cyan: [36, 39] } as const;

export function paint(enabled: boolean): Painter {
  const make = ([open, close]: readonly [number, number]) => (text: string) => (enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text);
  return {
    bold: make(codes.bold),
    dim: make(codes.dim),
    red: make(codes.red),
    green: make(codes.green),
    yellow: make(codes.yellow),
    magenta: make(codes.magenta),
    cyan: make(codes.cyan),
  };
}
