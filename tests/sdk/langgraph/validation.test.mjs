// The official suite. AGENTCKPT_VALIDATION=compare (default): once over the bare saver and once
// over the wrapper, under names of their own, so the suite skips nothing for either and
// run_validation.mjs compares the two. AGENTCKPT_VALIDATION=official: over the wrapper alone,
// under the name the suite's maintainers validate the SQLite saver with (see
// validation_initializer.mjs).
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { bare, wrapped, kOfficialSqliteName } from "./validation_initializer.mjs";

if (process.env.AGENTCKPT_VALIDATION === "official") {
  validate(wrapped(kOfficialSqliteName));
} else {
  validate(bare);
  validate(wrapped());
}
