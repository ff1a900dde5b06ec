// The official suite, once over the bare saver and once over the wrapper (run_validation.mjs
// compares the two).
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { bare, wrapped } from "./validation_initializer.mjs";

validate(bare);
validate(wrapped);
