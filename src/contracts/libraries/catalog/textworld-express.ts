// TextWorldExpress's part of the checker's catalog of env library names: the games the pinned
// version defines, read off the installed library by runtime-gpu/arl_envhost/catalog.py. A file
// of its own because it is generated: test/envs/library-catalog.test.ts keeps it equal to the
// library's own names (and to the game knob's enum) and rewrites the part below with
// ARL_WRITE_CATALOG=1 when the pin moves.

export interface TextWorldExpressCatalog {
  readonly version: string;
  readonly games: readonly string[];
}

// BEGIN generated
// prettier-ignore
export const textworldExpressCatalog: TextWorldExpressCatalog = {
  version: "1.1.0",
  games: ["cookingworld","coin","twc","mapreader","arithmetic","sorting","simonsays","peckingorder"],
};
// END generated
