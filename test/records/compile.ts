/**
 * Runs the TypeScript compiler, with the project's tsconfig, over source texts held in memory, so a
 * test can check values (a sandbox page, a yielded record) against the record types, or check that
 * a wrong type assertion really fails to compile.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Absolute path of `src/records/index.ts`, for imports in generated sources. */
export const recordsIndex = fileURLToPath(new URL('../../src/records/index.ts', import.meta.url));

/** A compile error: the file it is in, its 0-based line, and its message. */
export interface CompileError {
  file: string;
  line: number;
  message: string;
}

function projectOptions(): ts.CompilerOptions {
  const configPath = ts.findConfigFile(recordsIndex, (path) => ts.sys.fileExists(path), 'tsconfig.json');
  if (configPath === undefined) throw new Error('tsconfig.json not found above src/records');
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (config === undefined) throw new Error(`tsconfig at ${configPath} could not be read`);
  return config.options;
}

/** Files on disk do not change during a run: parse each once (the libraries are most of the work). */
const parsed = new Map<string, ts.SourceFile>();

/**
 * Compiles `sources` (absolute path → text; the path need not exist, or its text replaces the file's)
 * as the roots of one program and returns every error found, in them or in what they import.
 */
export function compile(sources: ReadonlyMap<string, string>): CompileError[] {
  const options = projectOptions();
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    const text = sources.get(fileName);
    if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersion);
    let file = parsed.get(fileName);
    if (file === undefined) {
      file = getSourceFile(fileName, languageVersion, ...rest);
      if (file !== undefined) parsed.set(fileName, file);
    }
    return file;
  };
  host.fileExists = (fileName) => sources.has(fileName) || fileExists(fileName);
  const program = ts.createProgram({ rootNames: [...sources.keys()], options, host });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ({
    file: diagnostic.file?.fileName ?? '',
    line: diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line : -1,
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n').slice(0, 400),
  }));
}
