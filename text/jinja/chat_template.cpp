#include "text/jinja/chat_template.hpp"

#include "text/jinja/ast.hpp"
#include "text/jinja/evaluator.hpp"
#include "text/jinja/lexer.hpp"
#include "text/jinja/parser.hpp"

namespace courier::text::jinja {

chat_template chat_template::parse(const std::string& source) {
  try {
    return chat_template(std::make_shared<const program>(parse_program(tokenize(source))));
  } catch (const template_error&) {
    throw;
  } catch (const std::exception& e) {
    // Allocation failures and the like: still one error type for the caller.
    throw template_error(std::string("cannot parse the template: ") + e.what());
  }
}

std::string chat_template::render(const nlohmann::ordered_json& context,
                                  const render_options& options) const {
  if (!context.is_object()) throw template_error("the render context must be a JSON object");
  try {
    evaluator ev(*program_, from_json(context), options);
    return ev.run();
  } catch (const template_error&) {
    throw;
  } catch (const std::exception& e) {
    throw template_error(std::string("cannot render the template: ") + e.what());
  }
}

std::string chat_template::render(const nlohmann::json& context,
                                  const render_options& options) const {
  return render(nlohmann::ordered_json(context), options);
}

}  // namespace courier::text::jinja
