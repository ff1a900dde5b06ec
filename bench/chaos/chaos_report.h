// The recovery report: docs/recovery-report.md from the summaries of one or more runs, next to
// the reference figures, plus the data of the recovery-time distribution for gnuplot.
#pragma once

#include <string>
#include <vector>

namespace chaos {

struct ReportOptions {
  std::vector<std::string> runs;  // output directories of `chaos_harness run`
  std::string out_path;           // the markdown file
  std::string plot_data_path;     // recovery times, one column per run, for gnuplot
  std::string plot_script_path;   // the gnuplot script that draws plot_svg_path
  std::string plot_svg_path = "docs/recovery-times.svg";  // linked by its file name
  std::vector<std::string> machine;                       // nproc, CPU, kernel, disk, load
  std::vector<std::string> notes;                         // caveats about these particular runs
};

// Writes the report and the plot data. Returns 0, or 1 with a message on stderr.
int WriteReport(const ReportOptions& options);

}  // namespace chaos
