#pragma once
// Plots as inline SVG text: a line chart (linear or log y) and a grouped bar chart. No script and
// no external resource, so a report opens offline and prints as it shows.
#include <string>
#include <utility>
#include <vector>

namespace bitparity::reports {

struct PlotSeries {
  PlotSeries(std::string series_name, std::string series_color, bool is_dashed = false)
      : name(std::move(series_name)), color(std::move(series_color)), dashed(is_dashed) {}
  std::string name;
  std::string color;
  bool dashed = false;
  double opacity = 1.0;  // a baseline's curve is drawn faint beside today's
  std::vector<std::pair<double, double>> points;  // (x, y); on a log axis y <= 0 is drawn at the axis floor
};

std::string line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                       const std::vector<PlotSeries>& series, bool log_y);

// values[s][c]: series s over category c. On a log axis (log_y) bars rise from the axis floor and
// a value <= 0 is drawn at the floor.
std::string bar_chart(const std::string& title, const std::string& y_label, const std::vector<std::string>& categories,
                      const std::vector<PlotSeries>& series, const std::vector<std::vector<double>>& values,
                      double reference_line = -1, bool log_y = false);

std::string escape_html(const std::string& text);

}  // namespace bitparity::reports
